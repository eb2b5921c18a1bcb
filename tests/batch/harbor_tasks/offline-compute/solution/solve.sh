#!/bin/bash
set -e
python3 -c 'print(sum(range(101)))' > /app/sum.txt
