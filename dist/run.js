#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{b as r}from"./chunks/chunk-NSK67L7I.js";import"./chunks/chunk-Q4Y2Q4YK.js";import"./chunks/chunk-ZRBRFQXH.js";import"./chunks/chunk-L4SNEBW6.js";await r();
