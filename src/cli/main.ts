#!/usr/bin/env node
/**
 * @module cli/main
 * The `serverless-worker` command: the program of program.ts on this process's arguments,
 * stdout and stderr. A failure's status becomes the process's (a command that set
 * process.exitCode itself, as `gpu` does, keeps it).
 */
import { runProgram } from './program.js';

const status = await runProgram(process.argv.slice(2));
if (status !== 0) process.exitCode = status;
