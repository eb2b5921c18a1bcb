#!/bin/bash
set -e
sed -i 's/TODO/foxtrot/' note.txt
