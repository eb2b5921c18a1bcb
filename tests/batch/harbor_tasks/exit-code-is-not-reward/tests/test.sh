#!/bin/bash
[ -f /app/done ] && echo 1 > /logs/verifier/reward.txt
exit 3
