"""Small helpers shared by every package: atomic writes, fsspec access, text shortening...

Internal: each module here imports nothing of heta_nb but :mod:`heta_nb.errors`, so any
package may use them without tying itself to another. ``atomic`` (atomic file writes),
``callables`` (is it async, which keywords), ``fs`` (bounded file reads, fsspec URLs), ``optional`` (optional
imports), ``sync`` (a coroutine from sync code), ``text`` (cutting and describing text),
``throttle`` (leading + trailing throttle), ``unicode`` (lone surrogates), ``values``
(numpy scalars as plain values).
"""

__all__: list[str] = []
