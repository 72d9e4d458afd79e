import { ArgWord } from './words'

/**
 * Programs that run other commands named in their own options or input,
 * which the analysis cannot follow (GTFOBins-style escapes). Each entry
 * says, for one program, whether its arguments make it run commands; a
 * match makes the call ask. This is a list of well-known cases, not a
 * proof: see the README's limits of a deny list.
 */
type EscapeCheck = (values: string[]) => string | undefined

/** Git options (`-c key=value`, `git config key value`) whose value is a command. */
const gitCommandKey = /^(alias\.|core\.(pager|sshcommand|editor|hookspath|fsmonitor|askpass|gitproxy)|diff\..*(external|textconv)|.*\.textconv$|filter\.|credential\.helper|sequence\.editor|gpg\..*program|uploadpack\.|receivepack\.|merge\..*driver|interactive\.difffilter|pager\.)/i

function anyValue(values: string[], test: (value: string) => boolean) {
  return values.some(test)
}

/** Option `name` with its value, as `--name=value`, `--name value`, `-xvalue` or `-x value`. */
function optionValues(values: string[], names: string[]): string[] {
  const found: string[] = []
  for (let index = 0; index < values.length; index++) {
    const value = values[index]
    for (const name of names) {
      if (value === name) found.push(values[index + 1] ?? '')
      else if (name.startsWith('--') && value.startsWith(name + '=')) found.push(value.slice(name.length + 1))
      else if (!name.startsWith('--') && value.startsWith(name) && value.length > name.length) found.push(value.slice(name.length))
    }
  }
  return found
}

/**
 * Git subcommands that run a command given in their own arguments:
 * `rebase -x`, `difftool -x`, `bisect run`, `submodule foreach`,
 * `filter-branch --*-filter`, `--upload-pack`/`--receive-pack`/`--exec`
 * of the transport commands, `grep -O`.
 */
function gitRunsArgument(values: string[]): string | undefined {
  const has = (...names: string[]) => optionValues(values, names).length > 0
    || values.some((value) => names.includes(value.split('=')[0]))
  if (values.includes('rebase') && has('-x', '--exec')) return 'git rebase --exec runs a command after each commit'
  if (values.includes('difftool') && has('-x', '--extcmd')) return 'git difftool --extcmd runs a command'
  if (values.includes('bisect') && values.includes('run')) return 'git bisect run runs a command'
  if (values.includes('submodule') && values.includes('foreach')) return 'git submodule foreach runs a command in each submodule'
  if (values.includes('filter-branch') || values.includes('filter-repo')) return 'git filter-branch runs its filters as commands'
  if (has('--upload-pack', '--receive-pack', '-u', '--exec')
    && values.some((value) => ['clone', 'fetch', 'pull', 'push', 'ls-remote', 'archive', 'send-pack', 'fetch-pack'].includes(value))) {
    return 'git runs the program given as --upload-pack, --receive-pack or --exec'
  }
  if (values.includes('grep') && values.some((value) => /^(-O|--open-files-in-pager)/.test(value))) return 'git grep -O runs a pager command'
}

/** Sub-commands of package runners that run a command of a package (which may be downloaded first). */
const packageExec: Record<string, string[]> = {
  npm: ['exec', 'x'],
  pnpm: ['exec', 'dlx', 'x'],
  yarn: ['exec', 'dlx'],
  bun: ['x', 'exec'],
}

/** The first word that is not an option: the sub-command of `npm`, `docker`, `perf`, … */
function subcommand(values: string[]) {
  return values.find((value) => !value.startsWith('-'))
}

const escapes: Record<string, EscapeCheck> = {
  git(values) {
    if (values.some((value) => value.startsWith('--exec-path='))) return 'git --exec-path makes git run its commands from another directory'
    const configs = optionValues(values, ['-c', '--config-env'])
    if (configs.some((config) => gitCommandKey.test(config.split('=')[0]))) return 'git -c sets an option whose value is a command'
    const config = values.indexOf('config')
    if (config !== -1 && values.slice(config + 1).some((value) => gitCommandKey.test(value))) return 'git config sets an option whose value is a command'
    return gitRunsArgument(values)
  },
  man: (values) => (anyValue(values, (value) => /^(-P|--pager|-H|--html)/.test(value)) ? 'man runs the pager or browser command given in its options' : undefined),
  ed: () => 'ed runs the editing commands of its input, and ! among them runs shell commands',
  dc: () => 'dc runs the program of its input or -e, and ! in it runs shell commands',
  m4: () => 'm4 runs syscmd and esyscmd of its input as shell commands',
  tmux: (values) => (values.length && values.every((value) => ['-V', 'ls', 'list-sessions'].includes(value))
    ? undefined
    : 'tmux runs commands in a terminal session outside this command'),
  screen: (values) => (values.some((value) => ['-ls', '-list', '-v', '--version'].includes(value)) ? undefined : 'screen runs commands in a terminal session outside this command'),
  sg: () => 'sg runs a command string as another group',
  runcon: () => 'runcon runs a command in another security context',
  bwrap: () => 'bwrap runs a command in a sandbox set up by options the analysis does not read',
  entr: () => 'entr runs a command each time a file changes',
  perf: (values) => (['stat', 'record', 'trace', 'sched', 'lock', 'mem', 'kmem', 'kvm', 'c2c', 'top'].includes(subcommand(values)) ? 'perf runs the command it measures' : undefined),
  npx: () => 'npx runs a command of a package, which it may download first',
  bunx: () => 'bunx runs a command of a package, which it may download first',
  docker: (values) => (['run', 'exec', 'create', 'compose', 'container'].includes(subcommand(values)) ? 'docker runs commands in a container, which can reach the host' : undefined),
  apt: (values) => (optionValues(values, ['-o', '--option']).some((option) => /invoke|pre-install-pkgs|::(pre|post)-/i.test(option))
    ? 'apt runs a command given in its -o options'
    : undefined),

  tar(values) {
    if (anyValue(values, (value) => /^--(checkpoint-action=exec|to-command|use-compress-program|info-script|new-volume-script|rsh-command)/.test(value))
      || optionValues(values, ['-I', '-F']).length) {
      return 'tar runs a command given in its options'
    }
  },
  rsync(values) {
    if (optionValues(values, ['-e', '--rsh', '--rsync-path']).length) return 'rsync runs a command given in its options'
  },
  zip(values) {
    if (anyValue(values, (value) => value === '-TT' || value.startsWith('--unzip-command'))) return 'zip runs a command given in its options'
  },
  ssh(values) {
    if (optionValues(values, ['-o']).some((option) => /^(proxycommand|localcommand|permitlocalcommand|knownhostscommand)/i.test(option))) {
      return 'ssh -o runs a local command'
    }
  },
  scp: (values) => escapes.ssh(values) ?? (optionValues(values, ['-S']).length ? 'scp -S runs another program' : undefined),
  vim: (values) => (anyValue(values, (value) => /^(-c|-S|--cmd|\+)/.test(value)) ? 'the editor runs commands given in its options' : undefined),
  gdb: (values) => (anyValue(values, (value) => /^(-ex|-x|--ex|--eval-command|--command|-batch)/.test(value)) ? 'gdb runs commands given in its options' : undefined),
  compgen: (values) => (anyValue(values, (value) => /^-[^-]*[CF]/.test(value)) ? 'compgen -C/-F runs a command' : undefined),
  at: () => 'at runs commands from its input later',
  batch: () => 'batch runs commands from its input later',
  crontab: () => 'crontab installs commands that run later',
  'run-parts': () => 'run-parts runs every script in a directory',
  'systemd-run': () => 'systemd-run starts a command outside this shell',
  nsenter: () => 'nsenter runs a command in other namespaces',
  unshare: () => 'unshare runs a command in new namespaces',
  runuser: () => 'runuser runs a command as another user',
  socat: (values) => (anyValue(values, (value) => /(^|[,:])(exec|system):/i.test(value)) ? 'socat runs a command given in its addresses' : undefined),
  nc: (values) => (anyValue(values, (value) => /^(-e|-c|--exec|--sh-exec|--lua-exec)/.test(value)) ? 'nc runs a command for each connection' : undefined),
}
escapes.vi = escapes.nvim = escapes.ex = escapes.view = escapes.vim
escapes.podman = escapes.nerdctl = escapes.docker
escapes['apt-get'] = escapes.apt
for (const [runner, words] of Object.entries(packageExec)) {
  escapes[runner] = (values) => (words.includes(subcommand(values)) ? `${runner} ${subcommand(values)} runs a command of a package, which it may download first` : undefined)
}
escapes.ncat = escapes.netcat = escapes.nc
escapes.bsdtar = escapes.gtar = escapes.tar

/**
 * Why a program runs commands named in its arguments, or undefined. An
 * argument built at run time counts as such an option for the programs in
 * the list (it could be one).
 */
export function escapeReason(name: string, args: ArgWord[]): string | undefined {
  const check = escapes[name]
  if (!check) return
  if (args.some((arg) => arg.value === undefined)) return `an argument of ${name} is built at run time, and ${name} can run commands named in its options`
  return check(args.map((arg) => arg.value!))
}
