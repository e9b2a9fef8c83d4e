"""Small helpers shared by every package: atomic writes, fsspec access, text shortening...

Internal: each module here imports nothing of heta_nb but :mod:`heta_nb.errors`, so any
package may use them without tying itself to another.
"""
