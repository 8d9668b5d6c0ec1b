#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{d as r}from"./chunks/chunk-BFCV2JUX.js";import"./chunks/chunk-AXNKAMKP.js";import"./chunks/chunk-A5P5XBVI.js";import"./chunks/chunk-XVKKP4BS.js";await r();
