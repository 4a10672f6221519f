import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/** The dashboard is served by `vigil serve` at PUBLIC_URL/app/; everything ships in the build (no CDN). */
export default defineConfig({
  root,
  base: '/app/',
  plugins: [preact()],
  build: {
    // DASHBOARD_OUT_DIR builds elsewhere (a test run's own copy); the server serves dist/dashboard.
    outDir: process.env.DASHBOARD_OUT_DIR ?? fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 700,
    // public.html: the public page of a shared message (src/api/public), the same message renderer.
    rollupOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        public: fileURLToPath(new URL('public.html', import.meta.url)),
      },
    },
  },
  server: {
    proxy: {
      '^/(buckets|account|applications|teams|regions|signin|signup|signout|profile|public|capture|gateway|radar|health)':
        'http://127.0.0.1:8080',
    },
  },
});
