#!/bin/bash
set -e
sed -i 's/TODO/bravo/' note.txt
