#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{b as r}from"./chunks/chunk-7DGKBFCX.js";import"./chunks/chunk-2KQ72STX.js";import"./chunks/chunk-IQP6YZ7V.js";import"./chunks/chunk-357VUGGE.js";await r();
