import { common } from './common';
import { contracts } from './contracts';
import { dashboard } from './dashboard';
import { dossiers } from './dossiers';
import { preview } from './preview';
import { signing } from './signing';
import { tasks } from './tasks';
import { verify } from './verify';

export const messages = { common, dashboard, dossiers, tasks, contracts, signing, verify, preview };
