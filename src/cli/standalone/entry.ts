import { Command } from 'commander';
import { registerClientCommands } from '../index.ts';
import { stopWithParent } from '../parentWatch.ts';

// The entry of the installable CLI (the svc-cli tarball, see build.ts): the client commands only,
// bundled into one JavaScript file that runs on Node 20+. The service's own commands (serve,
// migrate, projects disable|enable) need the service and stay in a checkout of svc (bin/svc.js).

declare const SVC_VERSION: string;

const program = new Command('svc')
  .description('svc client: the svc API from the command line')
  .version(SVC_VERSION, '-V, --version', 'print svc\'s version');
const projects = program.command('projects').description('projects (the service’s operator commands are in a checkout of svc)');
registerClientCommands(program, projects);
stopWithParent();
await program.parseAsync(process.argv);
