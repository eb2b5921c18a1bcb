#!/bin/bash
set -e
sed -i 's/TODO/charlie/' note.txt
