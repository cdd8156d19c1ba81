import { agent } from './agent';
import { common } from './common';
import { contracts } from './contracts';
import { dashboard } from './dashboard';
import { dossiers } from './dossiers';
import { mail } from './mail';
import { pdf } from './pdf';
import { preview } from './preview';
import { server } from './server';
import { signing } from './signing';
import { signingPage } from './signingPage';
import { tasks } from './tasks';
import { tokenSigning } from './tokenSigning';
import { verify } from './verify';

export const messages = {
  // The web application's pages.
  common,
  dashboard,
  dossiers,
  tasks,
  contracts,
  signing,
  verify,
  preview,
  // The signing page's script: its steps, refusals and USB-token signing.
  signingPage,
  tokenSigning,
  // E-mails and SMS, PDF texts, the desktop agent, the server's own messages.
  mail,
  pdf,
  agent,
  server,
};
