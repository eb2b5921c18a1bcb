#!/bin/bash
set -e
sed -i 's/TODO/lima/' note.txt
