import { post } from './runner.ts';

await post();
