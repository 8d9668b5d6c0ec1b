#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{b as r}from"./chunks/chunk-QASOTQAU.js";import"./chunks/chunk-P32H5C4X.js";import"./chunks/chunk-JHOLFNIZ.js";import"./chunks/chunk-UMJTC7E3.js";await r();
