#!/usr/bin/env node
import { createRequire as __k6dCreateRequire } from 'node:module';
import { fileURLToPath as __k6dFileURLToPath } from 'node:url';
const require = __k6dCreateRequire(import.meta.url);
const __filename = __k6dFileURLToPath(import.meta.url);
const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));
import{a as d,b as w,c as y,f as R,h as S}from"./chunks/chunk-URZIJVH5.js";import{f as c,g as f,h as p,i as u,j as o,k as l,l as g,m as n,n as a}from"./chunks/chunk-HZ36P3VC.js";import{e as s,f as m}from"./chunks/chunk-EBE6ZG5L.js";import{mkdtemp as v}from"node:fs/promises";import U from"node:os";import E from"node:path";async function k(){try{let r=R(t=>p(t));f(r.token);let e=y(),i=await S(r,{gh:w(r.token,{baseUrl:e.apiUrl}),transfer:new d,token:r.token,ctx:e,log:t=>a(t),writeSummary:M,tempDir:t=>v(E.join(process.env.RUNNER_TEMP||U.tmpdir(),t))});b(i)}catch(r){r instanceof s?o(r.message):(l(r instanceof Error&&r.stack?r.stack:String(r)),o(`report failed: ${m(r)}`))}}async function M(r){if(!process.env.GITHUB_STEP_SUMMARY){a("no GITHUB_STEP_SUMMARY: the job summary is not written");return}await c.addRaw(r).write()}function b(r){for(let[e,i]of Object.entries(r.outputs))u(e,i);for(let e of r.warnings)n(e);for(let e of r.annotations)e.level==="error"?g(e.message,{title:e.title}):n(e.message,{title:e.title});r.failure&&o(r.failure)}await k();
