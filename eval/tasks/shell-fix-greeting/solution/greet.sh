#!/usr/bin/env bash
name="$1"
echo "Hi, $name"
