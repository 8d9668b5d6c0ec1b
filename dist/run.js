#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{b as r}from"./chunks/chunk-XTS3XEXB.js";import"./chunks/chunk-K3MRGE2V.js";import"./chunks/chunk-UH633G4J.js";import"./chunks/chunk-3IKWIO27.js";await r();
