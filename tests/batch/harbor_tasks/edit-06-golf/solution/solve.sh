#!/bin/bash
set -e
sed -i 's/TODO/golf/' note.txt
