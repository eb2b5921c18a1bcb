#!/bin/bash
cd /app && if PYTHONPATH=/app python3 -m unittest discover -s /tests -p "check_*.py" -t /tests >/logs/verifier/unittest.txt 2>&1; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
