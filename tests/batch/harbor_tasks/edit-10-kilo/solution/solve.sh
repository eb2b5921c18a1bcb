#!/bin/bash
set -e
sed -i 's/TODO/kilo/' note.txt
