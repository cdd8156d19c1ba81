import type { mail as vi } from '../vi/mail';

export const mail: typeof vi = {
  greeting: (name: string) => `Dear ${name || 'Sir or Madam'},`,
  regards: 'Kind regards,',
  automated: 'This is an automated message; please do not reply.',
  untitled: '(untitled)',
  document: 'Document',
  documentId: 'Document ID',
  step: 'Step',
  stepValue: (stepName: string, order: number, total: number) =>
    `${stepName} (step ${order} of ${total})`,
  prevActor: 'Previous step handled by',
  dueBy: 'Due by',
  linkValidUntil: 'The link is valid until',
  completedAt: 'Completed at',
  rejectedBy: 'Rejected by',
  reason: 'Reason',
  userName: 'User name',
  password: 'Password',
  sandbox: (recipient: string) =>
    `[SANDBOX] This message goes to the developer account's address instead of the real recipient: ${recipient}.`,
  internal: {
    subject: (title: string) => `A task is waiting for you: ${title}`,
    intro: (title: string, stepName: string | null) =>
      stepName !== null
        ? `You have been assigned the step “${stepName}” of the document “${title}”.`
        : `You have been assigned the document “${title}”.`,
    link: 'Open the document',
  },
  external: {
    subject: (title: string) => `You are invited to sign: ${title}`,
    intro: (title: string) => `You are invited to review and sign the document “${title}”.`,
    link: 'Review and sign',
    newAccount: 'An account has been created for you to sign in:',
    keepSecret:
      'Please change the password after your first sign-in and do not forward this e-mail.',
    existingAccount: 'You can also sign in with your existing account:',
  },
  rejected: {
    subject: (title: string) => `Document rejected: ${title}`,
    intro: (title: string, stepName: string | null) =>
      stepName !== null
        ? `The document “${title}” has been rejected at the step “${stepName}”.`
        : `The document “${title}” has been rejected.`,
    link: 'View the document',
  },
  finished: {
    subject: (title: string) => `Document completed: ${title}`,
    intro: (title: string) => `The signing process of the document “${title}” is complete.`,
    link: 'View the document',
  },
  contract: {
    label: 'Contract',
    id: 'Contract ID',
    sender: 'Sent by',
    deadline: 'Signing deadline',
    reason: 'Reason',
    signedBy: 'Signed by',
    code: 'Code',
    invitation: {
      subject: (title: string) => `You are invited to sign: ${title}`,
      intro: (title: string) => `You are invited to review and sign the contract “${title}”.`,
      link: 'Review and sign',
    },
    viewing: {
      subject: (title: string) => `A contract shared with you: ${title}`,
      intro: (title: string) => `The contract “${title}” has been shared with you to view.`,
      link: 'View the contract',
    },
    expired: {
      subject: (title: string) => `Contract expired: ${title}`,
      intro: (title: string) =>
        `The signing deadline of the contract “${title}” passed before everyone signed.`,
    },
    cancelled: {
      subject: (title: string) => `Contract cancelled: ${title}`,
      intro: (title: string) =>
        `The contract “${title}” has been cancelled; its signing link no longer works.`,
    },
    completed: {
      subject: (title: string) => `Contract signed by everyone: ${title}`,
      intro: (title: string) => `Everyone has signed the contract “${title}”.`,
    },
    rejected: {
      subject: (title: string) => `Contract rejected: ${title}`,
      intro: (title: string) => `The contract “${title}” has been rejected.`,
    },
    signed: {
      subject: (title: string) => `A signing turn is done: ${title}`,
      intro: (title: string) =>
        `The signers of one turn have signed the contract “${title}”; the next signers have been invited.`,
    },
    otp: {
      subject: (title: string) => `Your signing code: ${title}`,
      intro: (title: string) =>
        `Your one-time code to sign the contract “${title}” is below, valid for 5 minutes. Do not share it with anyone.`,
    },
  },
  instant: (date: string, time: string) => `${date} ${time} (GMT+7)`,
  sms: {
    otp: (otp: string, minutes: number) =>
      `Your OTP is ${otp}, valid for ${minutes} minutes. Do not share this code with anyone.`,
    invited: (serviceName: string, title: string) =>
      `${serviceName}: You are invited to sign "${title}".`,
    signAt: (url: string) => `Sign at: ${url}`,
    account: (userName: string, password: string) => `Account: ${userName}, password: ${password}`,
  },
};
