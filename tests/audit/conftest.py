"""``tests/audit`` holds scripts run by hand (``python tests/audit/attack_rerun.py``), never collected."""

collect_ignore_glob = ["attack_rerun.py", "families_*.py"]
