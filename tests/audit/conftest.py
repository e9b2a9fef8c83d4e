"""``tests/audit`` holds scripts run by hand (``python tests/audit/attack_rerun.py``), never collected."""

collect_ignore = ["attack_rerun.py"]
