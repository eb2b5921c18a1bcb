#!/bin/bash
echo 0 > /logs/verifier/reward.txt
[ -f /app/done ] && echo '{"reward": 1}' > /logs/verifier/reward.json
exit 0
