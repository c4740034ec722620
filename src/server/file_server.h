// A file server over a directory, as Go's http.FileServer(http.Dir(root)) answers (upstream
// serves the kubelet API's /logs/ with it over /var/log).
//
// Contract:
// - ServeDirectoryFile answers for `path` (the request path with the route's prefix stripped,
//   as http.StripPrefix leaves it; "" is the root) on `out`, blocking on the disk (call it from a
//   streaming worker):
//     * the path is cleaned and joined below `root`; symlinks are followed as os.Open follows
//       them (a link may point outside the directory, as upstream), ".." cannot climb out;
//     * missing -> 404 "404 page not found"; permission denied -> 403 "403 Forbidden"; other
//       errors (a NUL byte, a link loop) -> 500 "500 Internal Server Error";
//     * ".../index.html" -> 301 to "./"; a directory without a trailing slash -> 301 to
//       "<base>/"; a file with one -> 301 to "../<base>" (relative Locations, the query kept);
//     * a directory: its index.html if it has one, else Go's listing: "<pre>\n" then one
//       `<a href="<url-escaped name>">` line per entry sorted by name (directories with a
//       trailing slash, names HTML-escaped, "./" before a name whose first segment has a ':'),
//       then "</pre>\n", as text/html; charset=utf-8;
//     * a file: Content-Type from its extension (Go's built-in table and the system's
//       globs2 / mime.types as Go's mime package loads them), else sniffed from its first 512
//       bytes (Go's DetectContentType signatures for HTML, XML, PDF, PostScript, BOMs, common
//       image, audio, font and archive formats, then text or application/octet-stream);
//       Last-Modified, Accept-Ranges: bytes; If-Modified-Since -> 304; one byte range (Range /
//       If-Range) -> 206 with Content-Range, an unsatisfiable one -> 416; the body streamed
//       in chunks (no Content-Length), at most the size the file had when looked at.
// - Not reproduced: multipart answers to several ranges (the whole file is sent),
//   If-Match / If-None-Match / If-Unmodified-Since. FIFOs are read without blocking.
// Thread-safe (no state but the MIME table, loaded once).
#ifndef KUBELET_SERVER_FILE_SERVER_H_
#define KUBELET_SERVER_FILE_SERVER_H_

#include <string>
#include <string_view>

#include "server/http_server.h"

namespace kubelet::server {

void ServeDirectoryFile(const std::string& root, const std::string& path, const HttpRequest& req,
                        ResponseStream& out);

// mime.TypeByExtension (".log" -> ...), "" when unknown.
std::string MimeTypeByExtension(std::string_view ext);
// http.DetectContentType of (up to) the first 512 bytes.
std::string DetectContentType(std::string_view data);
// Go's url.URL{Path: name}.String() for a relative name.
std::string GoRelativeUrl(std::string_view name);

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_FILE_SERVER_H_
