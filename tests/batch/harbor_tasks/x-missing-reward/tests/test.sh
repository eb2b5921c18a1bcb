#!/bin/bash
echo tests ran
