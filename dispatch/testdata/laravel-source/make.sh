#!/bin/sh
# Writes VERSION.jsonl for each release below from a checkout (or bare clone) of laravel/framework:
#   sh make.sh /path/to/laravel-framework.git
# Needs PHP 8.2 and Debian's php-laravel-framework (Laravel 8.83), whose support classes the releases'
# queue code runs on.
set -eu
repo=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for tag in v5.4.36 v5.5.50 v5.7.29 v5.8.38 v6.20.44 v7.0.0 v7.6.2 v7.7.0 v7.30.6 v8.0.0 v8.18.1 v8.19.0 v8.42.0 v8.43.0 v8.81.0 v8.82.0 v8.83.27 v9.3.1 v9.4.0 v9.52.22 v10.50.3 v11.1.1 v11.2.0 v11.56.0 v12.10.2 v12.11.0 v12.40.0 v12.41.0 v12.50.0 v12.51.0 v12.53.0 v12.54.0 v12.67.0 v13.0.0 v13.26.1; do
	mkdir "$tmp/$tag"
	# Collections (8.x), Foundation/Bus and Reflection (13.x) where the release has them.
	git -C "$repo" archive "$tag" $(git -C "$repo" ls-tree --name-only "$tag" src/Illuminate/Queue src/Illuminate/Bus src/Illuminate/Contracts \
		src/Illuminate/Support src/Illuminate/Collections src/Illuminate/Foundation/Bus src/Illuminate/Reflection) |
		tar -x -C "$tmp/$tag"
	php "$here/make.php" "$tmp/$tag/src" > "$here/${tag#v}.jsonl"
done
