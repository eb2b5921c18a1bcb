#!/bin/bash
# The answer where the instruction said, beside the question the Dockerfile copied there.
if [ "$(cat /app/answer.txt)" = "the answer is 42" ] && [ -f /app/question.txt ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
