#!/bin/bash
echo "the answer is 42" > /app/answer.txt
