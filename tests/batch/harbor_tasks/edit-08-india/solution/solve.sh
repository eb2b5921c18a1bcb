#!/bin/bash
set -e
sed -i 's/TODO/india/' note.txt
