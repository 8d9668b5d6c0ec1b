#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{e as a,f as b,g as c}from"./chunk-5LZG3WXJ.js";import"./chunk-2AVXCCJH.js";export{a as loadCliCluster,b as prepareKubernetesRun,c as removeClusterLeftovers};
