#!/bin/bash
if [ "$(cat /app/note.txt)" = "the word is hotel" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
