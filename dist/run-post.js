#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{b as o}from"./chunks/chunk-62Z34TSB.js";import"./chunks/chunk-BHB3FX36.js";import"./chunks/chunk-BLTCQMG4.js";import"./chunks/chunk-W5T4AIUO.js";await o();
