/** What `admin help` prints. The first block is the documented synopsis; keep it as it is. */
export const synopsis = `Operator commands of the signing service. Usage: npm run -s admin -- <command> [options] [--json]

admin tenant create  --code T --name N                 # root organization T + role "Quản trị" with every permission
admin org create     --tenant T --code C --name N [--parent P]
admin role create    --tenant T --org C --name N [--code R] [--permissions a:b,c:d|*] [--department-head]
admin user create    --tenant T --username U --email E [--name N] [--password P] [--phone P]
                     [--identity-number I] [--code K] [--type internal|external] [--member ORG:ROLE_NAME]...
admin user create    --super-admin --username U --email E --password P
admin apikey create  --tenant T --org C --user U [--expires ISO]    # organization key, printed once
admin apikey create  --global [--user U] [--expires ISO]            # global key, printed once
admin apikey list    [--tenant T]        admin apikey revoke --id ID
admin apikey import-legacy --tenant T --org C --user U --key K      # an old plaintext key
admin process create --tenant T --org C --file process.json
admin webhook create --tenant T --org C --url U [--events a,b]     # secret printed once
admin webhook list   [--tenant T]        admin webhook disable --id ID
admin domain add     --tenant T --origin https://partner.example
admin trust add      (--tenant T | --global) --file CA.pem [--name N]  # anchor for signers and TSAs
admin trust list     [--tenant T]        admin trust remove --id ID
admin ca export                                    # development CA certificate, PEM
admin seal show                                    # the seal certificate, PEM
admin signer-key create --tenant T --email E       # development: key + certificate; production: key + CSR
admin signer-key import-certificate --id ID --file CERT.pem
admin signer-key list [--tenant T]

Also:
admin role create    --tenant T --org C --name N        # without --code: from the name, "Nhân viên" → NHAN_VIEN (NHAN_VIEN_2 if taken)
admin process list   --tenant T [--org C]
admin template create --tenant T --org C --code K --name N --file form.pdf   # fillable PDF (AcroForm)
admin template list  --tenant T [--org C]
admin tenant create  --code T --name N [--developer-email E] [--developer-phone P]
admin tenant developer --tenant T [--email E] [--phone P]     # sandbox: mail/SMS go only there
admin delegation create --tenant T --from U --to U --starts ISO --ends ISO
admin delegation list   [--tenant T]        admin delegation revoke --id ID
admin task approve|acknowledge --tenant T --task CODE --user U [--comment C]
admin task reject       --tenant T --task CODE --user U --reason R
admin webhook rotate-secret --id ID [--grace-hours H]                # new secret printed once
admin webhook deliveries [--tenant T] [--status pending|delivered|failed] [--limit N]
admin webhook delivery --id N            admin webhook redeliver --id N
admin webhook received [--tag TAG] [--limit N]                       # what endpoint 18 kept
admin mail last      [--limit N] [--to ADDRESS] [--tenant T]  # newest e-mails first
admin mail show      --id ID
admin sms last       [--limit N] [--to PHONE] [--tenant T]    # newest SMS first
admin domain list    [--tenant T]        admin domain remove --tenant T --origin O
admin contract-type create --tenant T --name N     # the next contractTypeId of the tenant (1 "Hợp đồng" exists)
admin contract-type list   [--tenant T]
admin audit verify   --contract ID | --dossier ID   # recomputes the hash chain; exit 1 names the first broken link
admin storage sweep  [--dry-run]         # deletes stored files no row names (daily in the server)
admin storage copy   --to s3             # copies DATA_DIR/files into the S3_* bucket, each file read back and checked
admin backup         --out DIR           # database snapshot + the stored files it names, while the server runs
admin restore        --from DIR          # into a new or empty DATA_DIR only; every file checked
admin db migrate-to-postgres --to URL   # with the server stopped: SQLite into an empty PostgreSQL database, every row and signed PDF checked
admin help                               # this text (also: --help on any command)

Every command: --json prints exactly one JSON object on stdout ({"error":{"code","message"}} on
failure). --password - and --key - read the secret from standard input.
Exit codes: 0 done, 1 refused by the service (the error code says why), 2 bad arguments.
Environment: DATA_DIR (default ./data) and SECRET_KEY as for the server; safe to run while it runs
(restore excepted: it only writes a DATA_DIR no server uses; db migrate-to-postgres wants it stopped).
Reference: docs/cli.md`;
