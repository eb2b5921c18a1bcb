#!/bin/bash
set -e
sed -i 's/TODO/hotel/' note.txt
