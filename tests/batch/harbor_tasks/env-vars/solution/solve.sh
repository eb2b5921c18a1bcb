#!/bin/bash
set -e
printf "%s\n" "$GREETING" > /app/greeting.txt
