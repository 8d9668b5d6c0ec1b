#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{a,f as c,r as u}from"./chunks/chunk-KPJRAQHU.js";import{c as e,d as p,p as i,q as m,r as n}from"./chunks/chunk-PLQQ4UNK.js";import"./chunks/chunk-VKAPNOEX.js";async function s(){try{let t=c(o=>e(o)),r=await u(t,m(t.token,a()));for(let[o,f]of Object.entries(r.outputs))p(o,f);n(r)}catch(t){i(t,"report failed")}}await s();
