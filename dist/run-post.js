#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{c as o}from"./chunks/chunk-OCEENQNM.js";import"./chunks/chunk-D4JL4LFX.js";import"./chunks/chunk-N3C6AGFE.js";import"./chunks/chunk-AS36KPZZ.js";await o();
