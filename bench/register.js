// Compile the benchmark scripts (TypeScript) on the fly, but load the plugin
// from its build in lib/ untouched: that is the code users run, and
// esbuild-register's cross-module getters would otherwise add to every call.
require('esbuild-register/dist/node').register({ extensions: ['.ts'] })
