#!/bin/bash
set -e
sed -i 's/TODO/echo/' note.txt
