// Package thumb makes the thumbnails of SPEC.md's Files section: it
// parses a download's `thumb` and `fit` parameters (ParseSpec), resizes
// PNG, JPEG, GIF, WebP and AVIF images with disintegration/imaging into
// the source's own format (Generate), and keeps each variant on local
// disk, generated once however many requests ask for it at the same time
// (Cache). It knows nothing of records, rules or storage drivers: the
// files module checks access, finds the source, hands this package a
// way to open it, and serves what comes back, or the original when the
// answer wraps ErrNotThumbnailable.
//
// # Using it
//
//	spec, ok := thumb.ParseSpec(q.Get("thumb"), q.Get("fit"))
//	if !ok || !thumb.Supported(mime) { /* serve the original */ }
//	t, err := cache.Open(ctx, key, mime, spec, openSource)
//	if errors.Is(err, thumb.ErrNotThumbnailable) { /* serve the original */ }
//	defer t.File.Close() // then serve t.File as t.MIME()
//
// key names the source file for good (collection, record and stored
// name, say); cache.DeleteSource(key) removes its variants when the file
// is deleted. Each node has its own cache, so each node deletes its own.
// DetectFormat names AVIF, which net/http's sniffer does not.
//
// # Safety
//
// Nothing is decoded before the header gives the size: a source over
// MaxPixels, or a small file whose header claims billions of pixels (a
// decompression bomb), is refused after reading its header alone. An
// animated GIF's budget counts every frame, counted by walking its
// blocks without decompressing them. A decoder that panics on hostile
// input is a refusal, not a crash. Generation runs a bounded number at a
// time, AVIF one at a time (see NewCache).
//
// # Codecs, and why these
//
// PNG, JPEG and GIF use the standard library. WebP and AVIF had to be
// picked; the figures are from this project's machine (2 shared cores),
// for a 1920x1080 source and a 400-pixel thumbnail:
//
//   - WebP decoding: golang.org/x/image/webp, pure Go, 68-74 ms, against
//     gen2brain/webp's libwebp-in-WebAssembly at 128-143 ms, and a header
//     read that costs nothing (the WebAssembly one instantiates a module).
//     It reads stills only (an animated WebP is served as it is), and it
//     hands lossy pixels over as JPEG-range YCbCr, which they are not
//     (golang/go#40173): webpRGB converts them as libwebp does.
//   - WebP encoding: github.com/gen2brain/webp (libwebp compiled to
//     WebAssembly, run by wazero, no cgo), lossy at quality 85 in 7-55 ms,
//     lossless for a lossless source. The pure-Go alternative,
//     HugoSmits86/nativewebp, writes lossless only: 94 KB where lossy
//     takes 4 KB, and three times slower at 1600 pixels.
//   - AVIF: github.com/gen2brain/avif (libavif with libaom and dav1d in
//     WebAssembly) is the only candidate: the module proxy refuses every
//     cgo AVIF binding, and cgo against Debian's libavif would make the
//     binary depend on system libraries it does not need today. Decoding
//     is slow (0.4-0.8 s for 2 MP, 2.4 s and 0.8 GB for 12 MP), encoding
//     a thumbnail 60-140 ms.
//
// What they cost: both WebAssembly codecs and wazero add about 5.4 MB to
// a stripped binary (7.1 MB unstripped; x/image/webp alone 0.13 MB), and
// each is compiled to machine code on its first use in a process: the
// WebP encoder in 0.7-1.0 s, the AVIF decoder in 0.4-0.5 s, the AVIF
// encoder in 2.3-2.8 s, paid by the first request that needs it. At
// start-up each package looks for a system libwebp.so / libavif.so (the
// unversioned names that only the -dev packages install) and, when the
// binary is dynamically linked and finds one, calls it through purego
// instead of WebAssembly: faster, same library. The `nodynamic` build
// tag turns that off.
//
// Output settings (encode.go): JPEG quality 85 (SPEC.md), WebP 85, AVIF
// 70 at speed 10; GIF frames keep their source palettes (quantize.go).
// Resampling is Lanczos. A JPEG's EXIF orientation is applied.
package thumb
