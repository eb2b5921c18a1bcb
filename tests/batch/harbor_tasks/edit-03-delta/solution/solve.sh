#!/bin/bash
set -e
sed -i 's/TODO/delta/' note.txt
