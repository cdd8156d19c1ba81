import {
  escapeHtml,
  formatInstant,
  invitationSms,
  notificationKinds,
  notificationMail,
  otpSms,
  processFinishedMail,
  taskAssignedExternalMail,
  taskAssignedInternalMail,
  taskRejectedMail,
  withoutDiacritics,
  withSandboxNotice,
} from '../../src/notify/messages';
import {
  externalRecipient,
  internalRecipient,
  sampleData,
  vietnameseName,
  vietnameseTitle,
} from './support';

const vi = { locale: 'vi' as const, serviceName: 'ESign' };
const en = { locale: 'en' as const, serviceName: 'ESign' };

describe('notification e-mails: the four kinds in Vietnamese and English', () => {
  it('task assigned (internal staff): subject, step, previous handler, due date and link', () => {
    const data = sampleData({ recipients: [internalRecipient()] });
    const mail = taskAssignedInternalMail(data, internalRecipient(), vi);
    expect(mail.subject).toBe('[ESign] Bạn có công việc cần xử lý: Hợp đồng lao động <2026>');
    expect(mail.text).toBe(
      [
        'Kính gửi Trần Thị Bình,',
        'Bạn được giao xử lý bước “Khách hàng ký” của hồ sơ “Hợp đồng lao động <2026>”.',
        'Hồ sơ: Hợp đồng lao động <2026>\nMã hồ sơ: HD-2026-001\nBước: Khách hàng ký (bước 2/3)\nNgười xử lý bước trước: Lê Văn Cường\nHạn xử lý: 17:30 ngày 27/11/2026 (GMT+7)',
        'Mở hồ sơ để xử lý:\nhttps://sign.example/ky-so/abc?token=t1&lang=vi',
        'Trân trọng,\nESign\n\n-- \nĐây là thư tự động, vui lòng không trả lời thư này.',
      ].join('\n\n'),
    );
    expect(mail.sensitive).toBe(false);
    const english = taskAssignedInternalMail(data, internalRecipient(), en);
    expect(english.subject).toBe('[ESign] A task is waiting for you: Hợp đồng lao động <2026>');
    expect(english.text).toContain(
      'You have been assigned the step “Khách hàng ký” of the document “Hợp đồng lao động <2026>”.',
    );
    expect(english.text).toContain('Due by: 27/11/2026 17:30 (GMT+7)');
  });

  it('task assigned (outside signer): sign link, link expiry, and the user name and password of a created account', () => {
    const recipient = externalRecipient({
      credentials: { userName: 'anh.nguyen', password: 'Xy7&<pw>' },
    });
    const mail = taskAssignedExternalMail(sampleData(), recipient, vi);
    expect(mail.subject).toBe('[ESign] Mời bạn ký hồ sơ: Hợp đồng lao động <2026>');
    expect(mail.text).toContain('Kính gửi Nguyễn Văn Ánh,');
    expect(mail.text).toContain(
      'Xem và ký hồ sơ:\nhttps://sign.example/ky-so/abc?token=t1&lang=vi',
    );
    expect(mail.text).toContain('Liên kết có hiệu lực đến: 17:30 ngày 27/11/2026 (GMT+7)');
    expect(mail.text).toContain(
      'Một tài khoản đã được tạo để bạn đăng nhập:\n\nTên đăng nhập: anh.nguyen\nMật khẩu: Xy7&<pw>',
    );
    expect(mail.html).toContain('<strong>Xy7&amp;&lt;pw&gt;</strong>');
    expect(mail.sensitive).toBe(true);

    const english = taskAssignedExternalMail(sampleData(), recipient, en);
    expect(english.subject).toBe('[ESign] You are invited to sign: Hợp đồng lao động <2026>');
    expect(english.text).toContain('User name: anh.nguyen\nPassword: Xy7&<pw>');
  });

  it('credentials variants: null (no account), user name only (existing account), both', () => {
    const none = taskAssignedExternalMail(sampleData(), externalRecipient(), vi);
    expect(none.text).not.toContain('Tên đăng nhập');
    expect(none.sensitive).toBe(false);

    const existing = taskAssignedExternalMail(
      sampleData(),
      externalRecipient({ credentials: { userName: 'anh.nguyen', password: null } }),
      vi,
    );
    expect(existing.text).toContain(
      'Bạn cũng có thể đăng nhập bằng tài khoản hiện có:\n\nTên đăng nhập: anh.nguyen',
    );
    expect(existing.text).not.toContain('Mật khẩu');
    expect(existing.sensitive).toBe(false);

    // Internal recipients never carry credentials, whatever the object says.
    const internal = taskAssignedExternalMail(
      sampleData(),
      internalRecipient({ credentials: { userName: 'x', password: 'y' } }),
      vi,
    );
    expect(internal.text).not.toContain('Mật khẩu');
  });

  it('task rejected: to the creator and participants, with who rejected and the reason', () => {
    const data = sampleData({ note: 'Sai số tiền ở điều 3 & phụ lục <A>' });
    const mail = taskRejectedMail(data, internalRecipient(), vi);
    expect(mail.subject).toBe('[ESign] Hồ sơ bị từ chối: Hợp đồng lao động <2026>');
    expect(mail.text).toContain(
      'Hồ sơ “Hợp đồng lao động <2026>” đã bị từ chối ở bước “Khách hàng ký”.',
    );
    expect(mail.text).toContain('Người từ chối: Lê Văn Cường');
    expect(mail.text).toContain('Lý do từ chối: Sai số tiền ở điều 3 & phụ lục <A>');
    expect(mail.html).toContain('Sai số tiền ở điều 3 &amp; phụ lục &lt;A&gt;');
    const english = taskRejectedMail(data, internalRecipient(), en);
    expect(english.subject).toBe('[ESign] Document rejected: Hợp đồng lao động <2026>');
    expect(english.text).toContain('Reason: Sai số tiền ở điều 3 & phụ lục <A>');
  });

  it('process finished: completion time, no step and no link', () => {
    const data = sampleData({
      step: null,
      signUrl: null,
      expireAt: null,
      completeDate: '2026-11-26T01:02:03.000Z',
    });
    const mail = processFinishedMail(data, internalRecipient(), vi);
    expect(mail.subject).toBe('[ESign] Hồ sơ đã hoàn tất: Hợp đồng lao động <2026>');
    expect(mail.text).toContain('Quy trình ký hồ sơ “Hợp đồng lao động <2026>” đã hoàn tất.');
    expect(mail.text).toContain('Thời điểm hoàn tất: 08:02 ngày 26/11/2026 (GMT+7)');
    expect(mail.html).not.toContain('<a ');
    const english = processFinishedMail(data, internalRecipient(), en);
    expect(english.subject).toBe('[ESign] Document completed: Hợp đồng lao động <2026>');
    expect(english.text).toContain('Completed at: 26/11/2026 08:02 (GMT+7)');
  });

  it('every kind has a renderer, and both parts of every message carry the same facts', () => {
    for (const kind of notificationKinds) {
      for (const options of [vi, en]) {
        const mail = notificationMail[kind](sampleData(), externalRecipient(), options);
        expect(mail.text).toContain(vietnameseName);
        expect(mail.text).toContain(vietnameseTitle);
        expect(mail.html).toContain(escapeHtml(vietnameseName));
        expect(mail.html).toContain(`lang="${options.locale}"`);
        expect(mail.html).toContain('<meta charset="utf-8">');
      }
    }
  });
});

describe('HTML escaping of every interpolated value', () => {
  it('escapes names, titles, reasons and link text; the raw markup never reaches the HTML part', () => {
    const hostile = 'Nguyễn "Ánh" <script>alert(1)</script> & co';
    const data = sampleData({
      documentTitle: 'Hợp đồng lao động <2026>',
      prevActorName: '<b>Cường</b>',
      documentId: `HD'1`,
    });
    const mail = taskAssignedExternalMail(data, externalRecipient({ name: hostile }), vi);
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<b>Cường</b>');
    expect(mail.html).toContain(
      'Kính gửi Nguyễn &quot;Ánh&quot; &lt;script&gt;alert(1)&lt;/script&gt; &amp; co,',
    );
    expect(mail.html).toContain('Hợp đồng lao động &lt;2026&gt;');
    expect(mail.html).toContain('HD&#39;1');
    expect(mail.text).toContain(`Kính gửi ${hostile},`);
  });

  it('puts the sign URL in href with & as &amp; and only links http(s) URLs', () => {
    const mail = taskAssignedExternalMail(sampleData(), externalRecipient(), vi);
    expect(mail.html).toContain('href="https://sign.example/ky-so/abc?token=t1&amp;lang=vi"');
    const hostile = taskAssignedExternalMail(
      sampleData({ signUrl: 'javascript:alert(1)' }),
      externalRecipient(),
      vi,
    );
    expect(hostile.html).not.toContain('href=');
    expect(hostile.html).toContain('Xem và ký hồ sơ: javascript:alert(1)');
  });

  it('escapeHtml covers the five characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;',
    );
  });
});

describe('sandbox notice', () => {
  it('names the real recipient at the top of both parts and marks the subject', () => {
    const mail = taskAssignedInternalMail(sampleData(), internalRecipient(), vi);
    const marked = withSandboxNotice(mail, 'vi', 'a<b>@x.example');
    expect(marked.subject).toBe(`[SANDBOX] ${mail.subject}`);
    expect(marked.text.split('\n\n')[0]).toBe(
      '[SANDBOX] Thư này được gửi tới địa chỉ của tài khoản nhà phát triển thay cho người nhận thật: a<b>@x.example.',
    );
    expect(marked.html).toMatch(
      /<body[^>]*>\n<p style="[^"]*">\[SANDBOX\] .*: a&lt;b&gt;@x\.example\.<\/p>\n<p>Kính gửi/,
    );
  });
});

describe('SMS texts', () => {
  it('otpSms: the code and its validity, without diacritics', () => {
    expect(otpSms('vi', '042917', 5)).toBe(
      'Ma OTP cua ban la 042917, co hieu luc trong 5 phut. Khong chia se ma nay voi bat ky ai.',
    );
    expect(otpSms('en', '042917', 5)).toBe(
      'Your OTP is 042917, valid for 5 minutes. Do not share this code with anyone.',
    );
  });

  it('invitationSms: title without diacritics, sign link as is, credentials when created', () => {
    const credentials = { userName: 'anh.nguyen', password: 'Xy7&pw' };
    expect(invitationSms('vi', 'ESign', sampleData(), credentials)).toEqual({
      text: 'ESign: Ban duoc moi ky ho so "Hop dong lao dong <2026>". Ky tai: https://sign.example/ky-so/abc?token=t1&lang=vi Tai khoan: anh.nguyen, mat khau: Xy7&pw',
      sensitive: true,
    });
    expect(invitationSms('en', 'ESign', sampleData(), null)).toEqual({
      text: 'ESign: You are invited to sign "Hop dong lao dong <2026>". Sign at: https://sign.example/ky-so/abc?token=t1&lang=vi',
      sensitive: false,
    });
  });

  it('withoutDiacritics maps every Vietnamese letter to its base letter, đ to d', () => {
    expect(withoutDiacritics('Đặng Thị Ướt ơi ữ ỹ Ấ')).toBe('Dang Thi Uot oi u y A');
  });
});

describe('dates in messages', () => {
  it('are shown in Vietnam time (UTC+7), and a value that is not a date as it came', () => {
    expect(formatInstant('2026-12-31T17:05:00Z', 'vi')).toBe('00:05 ngày 01/01/2027 (GMT+7)');
    expect(formatInstant('2026-12-31T17:05:00Z', 'en')).toBe('01/01/2027 00:05 (GMT+7)');
    expect(formatInstant('soon', 'en')).toBe('soon');
  });
});
