/* Sandbox detection. A file at SANDBOX_SELF is not enough (anyone with write
 * access to /run could create one); it must be the root of a mount. */
#include "inside/inside.h"

#include <fcntl.h>
#include <sys/stat.h>

bool inside_sandbox(void)
{
	struct statx stx;
	if (statx(AT_FDCWD, SANDBOX_SELF, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0)
		return false;
	if (!S_ISREG(stx.stx_mode))
		return false;
	return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}
