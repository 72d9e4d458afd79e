import { ArgWord } from './words'
import { ShellReason, shellReason } from './reasons'

/**
 * Programs that run other commands named in their own options or input,
 * which the analysis cannot follow (GTFOBins-style escapes). Each entry
 * says, for one program, whether its arguments make it run commands; a
 * match makes the call ask. This is a list of well-known cases, not a
 * proof: see the README's limits of a deny list.
 */
type EscapeCheck = (values: string[]) => ShellReason | undefined

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
function gitRunsArgument(values: string[]): ShellReason | undefined {
  const has = (...names: string[]) => optionValues(values, names).length > 0
    || values.some((value) => names.includes(value.split('=')[0]))
  if (values.includes('rebase') && has('-x', '--exec')) return shellReason('git-rebase-exec')
  if (values.includes('difftool') && has('-x', '--extcmd')) return shellReason('git-difftool-command')
  if (values.includes('bisect') && values.includes('run')) return shellReason('git-bisect-run')
  if (values.includes('submodule') && values.includes('foreach')) return shellReason('git-submodule-foreach')
  if (values.includes('filter-branch') || values.includes('filter-repo')) return shellReason('git-filter-branch')
  if (has('--upload-pack', '--receive-pack', '-u', '--exec')
    && values.some((value) => ['clone', 'fetch', 'pull', 'push', 'ls-remote', 'archive', 'send-pack', 'fetch-pack'].includes(value))) {
    return shellReason('git-transport-program')
  }
  if (values.includes('grep') && values.some((value) => /^(-O|--open-files-in-pager)/.test(value))) return shellReason('git-grep-pager')
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
    if (values.some((value) => value.startsWith('--exec-path='))) return shellReason('git-exec-path')
    const configs = optionValues(values, ['-c', '--config-env'])
    if (configs.some((config) => gitCommandKey.test(config.split('=')[0]))) return shellReason('git-config-option')
    const config = values.indexOf('config')
    if (config !== -1 && values.slice(config + 1).some((value) => gitCommandKey.test(value))) return shellReason('git-config-command')
    return gitRunsArgument(values)
  },
  man: (values) => (anyValue(values, (value) => /^(-P|--pager|-H|--html)/.test(value)) ? shellReason('man-pager') : undefined),
  ed: () => shellReason('ed'),
  dc: () => shellReason('dc'),
  m4: () => shellReason('m4'),
  tmux: (values) => (values.length && values.every((value) => ['-V', 'ls', 'list-sessions'].includes(value))
    ? undefined
    : shellReason('terminal-session', { name: 'tmux' })),
  screen: (values) => (values.some((value) => ['-ls', '-list', '-v', '--version'].includes(value)) ? undefined : shellReason('terminal-session', { name: 'screen' })),
  sg: () => shellReason('sg'),
  runcon: () => shellReason('runcon'),
  bwrap: () => shellReason('bwrap'),
  entr: () => shellReason('entr'),
  perf: (values) => (['stat', 'record', 'trace', 'sched', 'lock', 'mem', 'kmem', 'kvm', 'c2c', 'top'].includes(subcommand(values)) ? shellReason('perf') : undefined),
  npx: () => shellReason('package-command', { command: 'npx' }),
  bunx: () => shellReason('package-command', { command: 'bunx' }),
  docker: (values) => (['run', 'exec', 'create', 'compose', 'container'].includes(subcommand(values)) ? shellReason('container') : undefined),
  apt: (values) => (optionValues(values, ['-o', '--option']).some((option) => /invoke|pre-install-pkgs|::(pre|post)-/i.test(option))
    ? shellReason('apt-option')
    : undefined),

  tar(values) {
    if (anyValue(values, (value) => /^--(checkpoint-action=exec|to-command|use-compress-program|info-script|new-volume-script|rsh-command)/.test(value))
      || optionValues(values, ['-I', '-F']).length) {
      return shellReason('option-command', { name: 'tar' })
    }
  },
  rsync(values) {
    if (optionValues(values, ['-e', '--rsh', '--rsync-path']).length) return shellReason('option-command', { name: 'rsync' })
  },
  zip(values) {
    if (anyValue(values, (value) => value === '-TT' || value.startsWith('--unzip-command'))) return shellReason('option-command', { name: 'zip' })
  },
  ssh(values) {
    if (optionValues(values, ['-o']).some((option) => /^(proxycommand|localcommand|permitlocalcommand|knownhostscommand)/i.test(option))) {
      return shellReason('ssh-command')
    }
  },
  scp: (values) => escapes.ssh(values) ?? (optionValues(values, ['-S']).length ? shellReason('scp-program') : undefined),
  vim: (values) => (anyValue(values, (value) => /^(-c|-S|--cmd|\+)/.test(value)) ? shellReason('editor-command') : undefined),
  gdb: (values) => (anyValue(values, (value) => /^(-ex|-x|--ex|--eval-command|--command|-batch)/.test(value)) ? shellReason('gdb-command') : undefined),
  compgen: (values) => (anyValue(values, (value) => /^-[^-]*[CF]/.test(value)) ? shellReason('compgen-command') : undefined),
  at: () => shellReason('runs-later', { name: 'at' }),
  batch: () => shellReason('runs-later', { name: 'batch' }),
  crontab: () => shellReason('crontab'),
  'run-parts': () => shellReason('run-parts'),
  'systemd-run': () => shellReason('systemd-run'),
  nsenter: () => shellReason('nsenter'),
  unshare: () => shellReason('unshare'),
  runuser: () => shellReason('runuser'),
  socat: (values) => (anyValue(values, (value) => /(^|[,:])(exec|system):/i.test(value)) ? shellReason('socat-command') : undefined),
  nc: (values) => (anyValue(values, (value) => /^(-e|-c|--exec|--sh-exec|--lua-exec)/.test(value)) ? shellReason('nc-command') : undefined),
}
escapes.vi = escapes.nvim = escapes.ex = escapes.view = escapes.vim
escapes.podman = escapes.nerdctl = escapes.docker
escapes['apt-get'] = escapes.apt
for (const [runner, words] of Object.entries(packageExec)) {
  escapes[runner] = (values) => (words.includes(subcommand(values)) ? shellReason('package-command', { command: `${runner} ${subcommand(values)}` }) : undefined)
}
escapes.ncat = escapes.netcat = escapes.nc
escapes.bsdtar = escapes.gtar = escapes.tar

/**
 * Why a program runs commands named in its arguments, or undefined. An
 * argument built at run time counts as such an option for the programs in
 * the list (it could be one).
 */
export function escapeReason(name: string, args: ArgWord[]): ShellReason | undefined {
  const check = escapes[name]
  if (!check) return
  if (args.some((arg) => arg.value === undefined)) return shellReason('escape-dynamic-argument', { name })
  return check(args.map((arg) => arg.value!))
}
