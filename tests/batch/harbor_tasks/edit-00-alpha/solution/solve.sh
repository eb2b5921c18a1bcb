#!/bin/bash
set -e
sed -i 's/TODO/alpha/' note.txt
