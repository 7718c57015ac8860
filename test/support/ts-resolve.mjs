// Lets a plain-node host script (signal-host.mjs, local-host.mjs, run with
// --experimental-transform-types) import the TypeScript sources: `./x.js` resolves to `./x.ts`.
import { registerHooks } from 'node:module';

registerHooks({
  resolve(spec, ctx, next) {
    try {
      return next(spec, ctx);
    } catch (e) {
      if (spec.startsWith('.') && spec.endsWith('.js')) return next(`${spec.slice(0, -3)}.ts`, ctx);
      throw e;
    }
  },
});
