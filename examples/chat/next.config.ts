import type { NextConfig } from 'next';

const config: NextConfig = {
  // The example runs next start beside its worker; nothing here is specific to @chamvi/temporal.
  poweredByHeader: false,
};

export default config;
