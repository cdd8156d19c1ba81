/** Every area of the catalogue in this language; `../index.ts` gathers both languages. */
export { agent } from './agent';
export { common } from './common';
export { contracts } from './contracts';
export { dashboard } from './dashboard';
export { dossiers } from './dossiers';
export { mail } from './mail';
export { pdf } from './pdf';
export { preview } from './preview';
export { server } from './server';
export { signing } from './signing';
export { signingPage } from './signingPage';
export { tasks } from './tasks';
export { tokenSigning } from './tokenSigning';
export { verify } from './verify';
