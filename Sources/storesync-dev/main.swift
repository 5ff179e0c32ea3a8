import DevTools
import Foundation

exit(await StoreSyncDev.main(CommandLine.arguments))
