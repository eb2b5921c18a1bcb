#!/bin/bash
set -e
sed -i 's/TODO/juliett/' note.txt
